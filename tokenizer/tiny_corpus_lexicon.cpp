// A bilingual word list by topic, written for this project. The generator uses every entry in
// several sentences, so the tokenizer learns whole everyday words in both languages.
#include "tokenizer/tiny_corpus_parts.h"

namespace ps::tiny_corpus {

std::string_view lexicon() {
  return R"LEX(苹果=apple;香蕉=banana;橙子=orange;葡萄=grape;西瓜=watermelon;草莓=strawberry
桃子=peach;梨=pear;柠檬=lemon;芒果=mango;樱桃=cherry;菠萝=pineapple;椰子=coconut
米饭=rice;面条=noodles;饺子=dumplings;包子=steamed bun;馒头=bread roll;粥=porridge
鸡蛋=egg;牛奶=milk;豆腐=tofu;牛肉=beef;猪肉=pork;鸡肉=chicken;鱼=fish;虾=shrimp
白菜=cabbage;土豆=potato;番茄=tomato;黄瓜=cucumber;胡萝卜=carrot;洋葱=onion;大蒜=garlic
辣椒=chili pepper;蘑菇=mushroom;玉米=corn;花生=peanut;蛋糕=cake;饼干=cookie;巧克力=chocolate
冰淇淋=ice cream;三明治=sandwich;汉堡=hamburger;披萨=pizza;沙拉=salad;汤=soup;火锅=hot pot
茶=tea;咖啡=coffee;果汁=juice;啤酒=beer;葡萄酒=wine;矿泉水=mineral water;可乐=cola
早餐=breakfast;午餐=lunch;晚餐=dinner;厨房=kitchen;筷子=chopsticks;勺子=spoon;盘子=plate
猫=cat;狗=dog;兔子=rabbit;老虎=tiger;狮子=lion;大象=elephant;熊猫=panda;猴子=monkey
马=horse;牛=cow;羊=sheep;猪=pig;鸭子=duck;鹅=goose;鸟=bird;鹦鹉=parrot;企鹅=penguin
蛇=snake;青蛙=frog;乌龟=turtle;蝴蝶=butterfly;蜜蜂=bee;蚂蚁=ant;蜘蛛=spider;鲸鱼=whale
海豚=dolphin;狐狸=fox;狼=wolf;熊=bear;鹿=deer;松鼠=squirrel;老鼠=mouse;骆驼=camel
树=tree;花=flower;草=grass;叶子=leaf;竹子=bamboo;玫瑰=rose;荷花=lotus;松树=pine tree
太阳=sun;月亮=moon;星星=star;天空=sky;云=cloud;雨=rain;雪=snow;风=wind;雷=thunder
彩虹=rainbow;雾=fog;冰=ice;山=mountain;河=river;湖=lake;海洋=ocean;岛=island;沙漠=desert
森林=forest;草原=grassland;瀑布=waterfall;火山=volcano;地震=earthquake;台风=typhoon
春天=spring;夏天=summer;秋天=autumn;冬天=winter;天气=weather;温度=temperature
北京=Beijing;上海=Shanghai;广州=Guangzhou;深圳=Shenzhen;杭州=Hangzhou;成都=Chengdu
西安=Xi'an;南京=Nanjing;武汉=Wuhan;重庆=Chongqing;天津=Tianjin;苏州=Suzhou;香港=Hong Kong
中国=China;日本=Japan;韩国=Korea;美国=the United States;英国=Britain;法国=France
德国=Germany;意大利=Italy;西班牙=Spain;俄罗斯=Russia;印度=India;巴西=Brazil;加拿大=Canada
澳大利亚=Australia;埃及=Egypt;新加坡=Singapore;泰国=Thailand;越南=Vietnam;瑞士=Switzerland
头=head;眼睛=eyes;耳朵=ears;鼻子=nose;嘴巴=mouth;牙齿=teeth;手=hand;脚=foot;腿=leg
心脏=heart;肚子=stomach;头发=hair;脸=face;肩膀=shoulder;手指=finger;皮肤=skin;骨头=bone
爸爸=father;妈妈=mother;哥哥=older brother;姐姐=older sister;弟弟=younger brother
妹妹=younger sister;爷爷=grandfather;奶奶=grandmother;儿子=son;女儿=daughter;朋友=friend
同学=classmate;同事=colleague;邻居=neighbour;老师=teacher;学生=student;孩子=child
医生=doctor;护士=nurse;警察=police officer;厨师=cook;司机=driver;农民=farmer;工人=worker
律师=lawyer;记者=journalist;作家=writer;画家=painter;歌手=singer;演员=actor;科学家=scientist
程序员=programmer;设计师=designer;经理=manager;老板=boss;秘书=secretary;会计=accountant
学校=school;大学=university;教室=classroom;图书馆=library;考试=exam;作业=homework
课本=textbook;铅笔=pencil;钢笔=pen;橡皮=eraser;尺子=ruler;黑板=blackboard;书包=schoolbag
数学=mathematics;物理=physics;化学=chemistry;生物=biology;历史=history;地理=geography
语文=Chinese class;英语=English;音乐=music;美术=art;体育=sports;哲学=philosophy;经济=economics
电脑=computer;手机=phone;键盘=keyboard;鼠标=mouse;屏幕=screen;耳机=headphones;相机=camera
软件=software;硬件=hardware;网络=network;服务器=server;数据库=database;浏览器=browser
操作系统=operating system;编译器=compiler;源代码=source code;函数=function;变量=variable
算法=algorithm;数据结构=data structure;数组=array;链表=linked list;哈希表=hash table
队列=queue;栈=stack;树结构=tree structure;图=graph;指针=pointer;线程=thread;进程=process
内存=memory;硬盘=disk;处理器=processor;显卡=graphics card;芯片=chip;带宽=bandwidth
延迟=latency;吞吐量=throughput;缓存=cache;索引=index;日志=log;配置=configuration
接口=interface;协议=protocol;请求=request;响应=response;错误=error;异常=exception
测试=test;调试=debugging;部署=deployment;版本=version;文档=documentation;仓库=repository
神经网络=neural network;参数=parameter;梯度=gradient;训练=training;推理=inference
词元=token;词表=vocabulary;嵌入=embedding;注意力=attention;张量=tensor;矩阵=matrix
向量=vector;概率=probability;损失函数=loss function;优化器=optimizer;学习率=learning rate
加法=addition;减法=subtraction;乘法=multiplication;除法=division;方程=equation;分数=fraction
小数=decimal;百分比=percentage;平均数=average;几何=geometry;三角形=triangle;圆=circle
正方形=square;长方形=rectangle;面积=area;体积=volume;角度=angle;直线=straight line
红色=red;橙色=orange colour;黄色=yellow;绿色=green;蓝色=blue;紫色=purple;粉色=pink
黑色=black;白色=white;灰色=grey;棕色=brown;金色=gold;银色=silver
衣服=clothes;衬衫=shirt;裤子=trousers;裙子=skirt;外套=coat;毛衣=sweater;鞋子=shoes
袜子=socks;帽子=hat;围巾=scarf;手套=gloves;眼镜=glasses;手表=watch;雨伞=umbrella;背包=backpack
房子=house;房间=room;客厅=living room;卧室=bedroom;浴室=bathroom;窗户=window;门=door
桌子=table;椅子=chair;沙发=sofa;床=bed;柜子=cabinet;镜子=mirror;灯=lamp;冰箱=fridge
洗衣机=washing machine;空调=air conditioner;电视=television;钟=clock;楼梯=stairs;花园=garden
汽车=car;公共汽车=bus;火车=train;飞机=plane;自行车=bicycle;地铁=subway;出租车=taxi
轮船=ship;摩托车=motorcycle;高铁=high-speed rail;机场=airport;车站=station;码头=pier
马路=road;桥=bridge;红绿灯=traffic light;停车场=parking lot;加油站=gas station;地图=map
足球=football;篮球=basketball;排球=volleyball;网球=tennis;乒乓球=table tennis;羽毛球=badminton
游泳=swimming;跑步=running;登山=climbing;滑雪=skiing;瑜伽=yoga;太极拳=tai chi;比赛=match
钢琴=piano;吉他=guitar;小提琴=violin;鼓=drum;歌曲=song;电影=movie;小说=novel;诗歌=poetry
画=painting;照片=photo;博物馆=museum;音乐会=concert;舞蹈=dance;戏剧=drama;动画=animation
高兴=happy;难过=sad;生气=angry;害怕=afraid;惊讶=surprised;紧张=nervous;放松=relaxed
无聊=bored;累=tired;兴奋=excited;满意=satisfied;担心=worried;感动=moved;骄傲=proud
早上=morning;中午=noon;下午=afternoon;晚上=evening;半夜=midnight;昨天=yesterday
今天=today;明天=tomorrow;星期一=Monday;星期二=Tuesday;星期三=Wednesday;星期四=Thursday
星期五=Friday;星期六=Saturday;星期日=Sunday;一月=January;二月=February;三月=March
四月=April;五月=May;六月=June;七月=July;八月=August;九月=September;十月=October
十一月=November;十二月=December;小时=hour;分钟=minute;秒=second;年=year;世纪=century
吃饭=eat a meal;喝水=drink water;睡觉=sleep;起床=get up;洗澡=take a shower;做饭=cook dinner
走路=walk;开车=drive;读书=read a book;写字=write;唱歌=sing;跳舞=dance at a party;画画=draw
打电话=make a call;发邮件=send an email;上网=go online;购物=go shopping;旅行=travel
学习=study;工作=work;休息=rest;思考=think;讨论=discuss;解释=explain;回答=answer;提问=ask
开始=begin;结束=finish;打开=open;关闭=close;保存=save;删除=delete;复制=copy;粘贴=paste
上传=upload;下载=download;安装=install;更新=update;登录=log in;注册=sign up;搜索=search
大=big;小=small;长=long;短=short;高=tall;矮=low;快=fast;慢=slow;新=new;旧=old
好=good;坏=bad;冷=cold;热=hot;干净=clean;脏=dirty;简单=simple;复杂=complicated
便宜=cheap;贵=expensive;安静=quiet;热闹=lively;容易=easy;困难=difficult;重要=important
有趣=interesting;美丽=beautiful;聪明=clever;勇敢=brave;友好=friendly;耐心=patient
物理学=physics research;化学反应=chemical reaction;原子=atom;分子=molecule;细胞=cell
基因=gene;蛋白质=protein;能量=energy;电流=electric current;磁场=magnetic field;光速=speed of light
宇宙=universe;银河=Milky Way;行星=planet;地球=Earth;火星=Mars;卫星=satellite;火箭=rocket
医院=hospital;药=medicine;感冒=cold;发烧=fever;咳嗽=cough;头疼=headache;健康=health
锻炼=exercise;营养=nutrition;维生素=vitamin;睡眠=sleep quality;体检=check-up;疫苗=vaccine
商店=shop;超市=supermarket;市场=market;银行=bank;邮局=post office;饭店=restaurant
价格=price;打折=discount;收据=receipt;现金=cash;信用卡=credit card;钱包=wallet;账单=bill
公司=company;办公室=office;会议=meeting;项目=project;计划=plan;报告=report;预算=budget
客户=customer;合同=contract;邮件=email;截止日期=deadline;团队=team;目标=goal;进度=progress
一举两得=kill two birds with one stone;半途而废=give up halfway;画蛇添足=overdo it
守株待兔=wait for luck instead of working;对牛弹琴=talk to a wall;井底之蛙=a frog in a well
马马虎虎=so-so;一路平安=have a safe trip;一帆风顺=smooth sailing;万事如意=may all go well
心想事成=may your wishes come true;恭喜发财=wishing you prosperity;生日快乐=happy birthday
新年快乐=happy new year;中秋节=Mid-Autumn Festival;春节=Spring Festival;端午节=Dragon Boat Festival
元宵节=Lantern Festival;圣诞节=Christmas;月饼=mooncake;红包=red envelope;鞭炮=firecrackers
灯笼=lantern;舞龙=dragon dance;粽子=rice dumpling;汤圆=sweet rice balls;年夜饭=reunion dinner
长城=the Great Wall;故宫=the Forbidden City;黄河=the Yellow River;长江=the Yangtze River
泰山=Mount Tai;西湖=West Lake;兵马俑=Terracotta Army;丝绸之路=Silk Road;大熊猫基地=panda base
书法=calligraphy;京剧=Peking opera;剪纸=paper cutting;陶瓷=porcelain;丝绸=silk;刺绣=embroidery
围棋=Go;象棋=Chinese chess;风筝=kite;茶馆=teahouse;胡同=hutong alley;四合院=courtyard house
邮票=stamp;信封=envelope;包裹=parcel;快递=courier;外卖=food delivery;二维码=QR code
支付宝=Alipay;微信=WeChat;短信=text message;密码=password;账号=account;验证码=verification code
充电器=charger;电池=battery;插座=socket;开关=switch;遥控器=remote control;路由器=router
打印机=printer;扫描仪=scanner;投影仪=projector;麦克风=microphone;音箱=speaker;显示器=monitor
垃圾=rubbish;回收=recycling;污染=pollution;环境=environment;气候=climate;节约=saving
志愿者=volunteer;捐款=donation;社区=community;城市=city;农村=countryside;乡镇=township
法律=law;政府=government;选举=election;新闻=news;报纸=newspaper;杂志=magazine;广播=radio
)LEX";
}

}  // namespace ps::tiny_corpus
